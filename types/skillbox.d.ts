// types/skillbox.d.ts — TypeScript declarations of the skillbox v1 JavaScript API (docs/architecture.md
// "JavaScript API for skills").
//
// A skill runs in QuickJS 2021-03-27 (ES2020) with exactly these host globals: no DOM, no Node.js, no
// `fetch`, no `require`, no `process`. Use with a tsconfig like:
//
//   { "compilerOptions": { "target": "es2020", "module": "es2020", "lib": ["es2020"], "types": [],
//                          "allowJs": true, "checkJs": true, "noEmit": true, "strict": true },
//     "files": ["path/to/skillbox.d.ts"], "include": ["index.js"] }
//
// (`"types": []` keeps @types/node out: its `process`, `require` and `setTimeout` do not exist here.)
// Checked with TypeScript 5.9.3 (scripts/typecheck.sh; `skillbox init --ts` pins the same version).
//
// Host failures throw (store, env) or reject (fs, http) with a `Skillbox.HostError`: an `Error` of the
// skill's own realm with a stable `name` and `code` (see Skillbox.ErrorCodes). Wrong argument types
// are a `TypeError`, out-of-range numbers a `RangeError`.

declare namespace Skillbox {
  // ---- values ----------------------------------------------------------------------------------------

  /** A value JSON can represent: what `store.get` returns and `responseType: 'json'` resolves to. */
  type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

  /**
   * What `store.set` accepts: anything `JSON.stringify` turns into JSON text (objects, arrays, strings,
   * finite numbers, booleans, null; `toJSON` is honoured). At run time `undefined`, functions, symbols,
   * BigInts and cyclic objects are a TypeError.
   */
  type JsonInput = string | number | boolean | null | object;

  // ---- errors ----------------------------------------------------------------------------------------

  /** Error names of host failures and their `code`s (docs/architecture.md "Contracts"). */
  interface ErrorCodes {
    PermissionDenied: 'EACCES';  // the manifest does not grant it; the message names the manifest key
    NotFound: 'ENOENT';
    QuotaExceeded: 'EQUOTA';     // a workspace or store quota; nothing was changed
    InvalidArgument: 'EINVAL';   // malformed path, key, name, URL or header (NUL, bad UTF-8, ...)
    PayloadTooLarge: 'E2BIG';    // a size cap: request/response body, file size
    Timeout: 'ETIMEDOUT';
    NetworkError: 'ENET';        // connection, TLS, protocol failures
    AlreadyExists: 'EEXIST';     // mkdir/rename target exists
    NotEmpty: 'ENOTEMPTY';       // non-recursive remove of a non-empty directory
    IoError: 'EIO';              // the host failed unexpectedly (e.g. a damaged store database)
  }
  type HostErrorName = keyof ErrorCodes;
  type HostErrorCode = ErrorCodes[HostErrorName];

  /** An error from a host function. `e instanceof Error` holds; narrow with `e.name` or `e.code`. */
  type HostError = {
    [N in HostErrorName]: Error & { readonly name: N; readonly code: ErrorCodes[N]; readonly message: string };
  }[HostErrorName];

  // ---- store -----------------------------------------------------------------------------------------

  /**
   * The skill's persistent key-value store (docs/store.md). Synchronous. Keys: 1..512 bytes of UTF-8, no
   * NUL. Values: JSON. Quotas from `permissions.store`; a write past one throws QuotaExceeded and changes
   * nothing.
   */
  interface Store {
    /** The stored value (a fresh copy), or undefined when the key does not exist. */
    get<T extends JsonValue = JsonValue>(key: string): T | undefined;
    /** Stores the value's JSON; durable when it returns. Throws QuotaExceeded, InvalidArgument, TypeError. */
    set(key: string, value: JsonInput): void;
    /** Deletes the key; returns whether it existed. */
    delete(key: string): boolean;
    /** Keys starting with `prefix` (default: all), sorted by UTF-8 bytes. */
    keys(prefix?: string): string[];
    /**
     * Atomically adds `delta` (a finite number, default 1) to the number stored under `key` (0 when the
     * key does not exist) and returns the new value; concurrent runs never lose an increment. Double
     * arithmetic, as `+`. Throws TypeError (delta not a number), RangeError (NaN, Infinity),
     * InvalidArgument (the key holds something other than a number, or the sum overflows), QuotaExceeded.
     */
    increment(key: string, delta?: number): number;
    /**
     * Atomically stores `value` only if the key currently holds `expected` (compared as JSON values:
     * object member order and `1` vs `1.0` do not matter) and returns whether it did. `expected`
     * undefined: the key must not exist. `value` undefined: delete the key. All three arguments are
     * required. Throws like `set`.
     */
    compareAndSet(key: string, expected: JsonInput | undefined, value: JsonInput | undefined): boolean;
  }

  // ---- env -------------------------------------------------------------------------------------------

  /** Host environment values, only for names listed in `permissions.env` (docs/env.md). */
  interface Env {
    /** The value, or undefined when the name is not granted or not set. InvalidArgument for '', NUL, '='. */
    get(name: string): string | undefined;
  }

  // ---- fs --------------------------------------------------------------------------------------------

  type FsEntryType = 'file' | 'directory' | 'other';

  interface FsDirEntry {
    name: string;
    type: FsEntryType;
  }

  interface FsStat {
    type: FsEntryType;
    /** Bytes. */
    size: number;
    /** Last modification, milliseconds since the Unix epoch. */
    mtimeMs: number;
  }

  /**
   * The skill's workspace (`permissions.fs`). Paths are relative POSIX paths inside the workspace (valid
   * UTF-8, no NUL, at most 4096 bytes). Every method returns a Promise; refusals reject with
   * PermissionDenied, InvalidArgument, QuotaExceeded, NotFound, ...
   */
  interface Fs {
    readFile(path: string, options?: { encoding?: 'utf8' }): Promise<string>;
    readFile(path: string, options: { encoding: 'binary' }): Promise<Uint8Array>;
    readFile(path: string, options?: { encoding?: 'utf8' | 'binary' }): Promise<string | Uint8Array>;
    /** Replaces the file atomically. A string is written as UTF-8. */
    writeFile(path: string, data: string | Uint8Array): Promise<void>;
    appendFile(path: string, data: string | Uint8Array): Promise<void>;
    /** Entries sorted by name. */
    readdir(path: string): Promise<FsDirEntry[]>;
    stat(path: string): Promise<FsStat>;
    exists(path: string): Promise<boolean>;
    mkdir(path: string, options?: { recursive?: boolean }): Promise<void>;
    remove(path: string, options?: { recursive?: boolean }): Promise<void>;
    rename(from: string, to: string): Promise<void>;
  }

  // ---- http ------------------------------------------------------------------------------------------

  type HttpResponseType = 'text' | 'binary' | 'json';
  /** Header names and values. Names are sent as given; response names are lower-cased. */
  type HttpHeaders = { [name: string]: string };

  interface HttpOptions<R extends HttpResponseType = HttpResponseType> {
    headers?: HttpHeaders;
    /** Lowered to `permissions.http.timeout_ms`, never raised. */
    timeoutMs?: number;
    /** How to deliver the body: a string (default), a Uint8Array, or the parsed JSON value. */
    responseType?: R;
  }

  interface HttpRequestInit<R extends HttpResponseType = HttpResponseType> extends HttpOptions<R> {
    /** Default 'GET'; must be allowed by `permissions.http.methods`. */
    method?: string;
    url: string;
    body?: string | Uint8Array;
  }

  /**
   * A response: a plain, JSON-serializable object. HTTP error statuses (404, 500) resolve; policy
   * refusals, transport failures, caps and timeouts reject.
   */
  interface HttpResponse<B = string> {
    status: number;
    statusText: string;
    /** Lower-cased header names. */
    headers: HttpHeaders;
    body: B;
    /** The final URL, after redirects. */
    url: string;
  }

  type HttpBody<R extends HttpResponseType> = R extends 'binary'
    ? Uint8Array
    : R extends 'json'
      ? JsonValue
      : string;

  /** Mediated network access (`permissions.http`): allowlisted URLs only, checked on every redirect. */
  interface Http {
    get<R extends HttpResponseType = 'text'>(url: string, options?: HttpOptions<R>): Promise<HttpResponse<HttpBody<R>>>;
    post<R extends HttpResponseType = 'text'>(
      url: string,
      body?: string | Uint8Array,
      options?: HttpOptions<R>,
    ): Promise<HttpResponse<HttpBody<R>>>;
    request<R extends HttpResponseType = 'text'>(init: HttpRequestInit<R>): Promise<HttpResponse<HttpBody<R>>>;
  }

  // ---- the openhuman namespace -----------------------------------------------------------------------

  interface OpenHuman {
    readonly fs: Fs;
    readonly http: Http;
    /** The same object as the global `store`. */
    readonly store: Store;
    /** The same object as the global `env`. */
    readonly env: Env;
  }

  // ---- console, timers, encoding, crypto -------------------------------------------------------------

  interface Console {
    log(...args: unknown[]): void;
    info(...args: unknown[]): void;
    warn(...args: unknown[]): void;
    error(...args: unknown[]): void;
    debug(...args: unknown[]): void;
  }

  /** Timer ids are positive integers. */
  type TimerId = number;

  interface Crypto {
    /** Fills an integer TypedArray (at most 65,536 bytes) with random bytes and returns it. */
    getRandomValues<T extends Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array | Uint32Array | BigInt64Array | BigUint64Array>(
      array: T,
    ): T;
    /** A random RFC 4122 version 4 UUID, lower-case. */
    randomUUID(): string;
  }

  /**
   * A skill's export: called with the invocation's input (parsed JSON), its result (or the value its
   * promise fulfils with) must be JSON-representable. `I` may be an interface (`interface Input {
   * city?: string }`): nothing checks at run time that the input has its shape, so check what you rely on.
   */
  type Handler<I extends JsonInput | undefined = JsonValue, O = JsonInput | undefined | void> = (
    input: I,
  ) => O | Promise<O>;

  /**
   * The same for an `async function` typed with JSDoc (`/** @type {Skillbox.AsyncHandler<Input>} *\/`):
   * TypeScript wants an async function's declared return type to be a Promise, which Handler's
   * `O | Promise<O>` is not.
   */
  type AsyncHandler<I extends JsonInput | undefined = JsonValue, O = JsonInput | undefined | void> = (
    input: I,
  ) => Promise<O>;
}

// ---- globals ---------------------------------------------------------------------------------------------

/** Logs at level info. Arguments are formatted like console.log; output is capped per run. */
declare function log(...args: unknown[]): void;
declare var console: Skillbox.Console;

declare var store: Skillbox.Store;
declare var env: Skillbox.Env;
declare var openhuman: Skillbox.OpenHuman;

declare function setTimeout<A extends unknown[]>(callback: (...args: A) => void, delayMs?: number, ...args: A): Skillbox.TimerId;
declare function setInterval<A extends unknown[]>(callback: (...args: A) => void, delayMs?: number, ...args: A): Skillbox.TimerId;
declare function clearTimeout(id?: Skillbox.TimerId): void;
declare function clearInterval(id?: Skillbox.TimerId): void;
declare function queueMicrotask(callback: () => void): void;

declare class TextEncoder {
  constructor();
  readonly encoding: 'utf-8';
  encode(input?: string): Uint8Array;
  encodeInto(source: string, destination: Uint8Array): { read: number; written: number };
}

declare class TextDecoder {
  /** Only UTF-8 labels ('utf-8', 'utf8', ...) are supported; others are a RangeError. */
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  readonly encoding: 'utf-8';
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  decode(input?: ArrayBuffer | ArrayBufferView, options?: { stream?: boolean }): string;
}

/** Base64 of a string of code points 0..255 (InvalidCharacterError otherwise). */
declare function btoa(data: string): string;
/** Decodes base64 into a string of code points 0..255 (InvalidCharacterError for bad input). */
declare function atob(data: string): string;

declare var crypto: Skillbox.Crypto;
