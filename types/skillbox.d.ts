// types/skillbox.d.ts — TypeScript declarations of the skillbox v1 JavaScript API (docs/architecture.md
// "JavaScript API for skills").
//
// A skill runs in QuickJS 2021-03-27 (ES2020) with exactly these host globals: no DOM, no Node.js, no
// `require`, no `process`; `fetch` and its classes (the end of this file) only when the manifest sets
// `permissions.http.fetch: true`. Use with a tsconfig like:
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
    /**
     * How to deliver the body: a string (default), a Uint8Array, or the parsed JSON value. With 'json' a
     * body that is not JSON rejects with a SyntaxError naming the URL and status, whatever the status
     * (an HTML 404 page rejects; a JSON error body resolves parsed): read error pages with 'text'.
     */
    responseType?: R;
  }

  interface HttpRequestInit<R extends HttpResponseType = HttpResponseType> extends HttpOptions<R> {
    /** Default 'GET'; must be allowed by `permissions.http.methods`. */
    method?: string;
    url: string;
    body?: string | Uint8Array;
  }

  /**
   * A response: a plain, JSON-serializable object. HTTP error statuses (404, 500) resolve (check
   * `status`); policy refusals, transport failures, caps and timeouts reject with a HostError, and with
   * responseType 'json' a body that is not JSON rejects with a SyntaxError.
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

// ---- fetch: only when skill.json sets permissions.http.fetch (docs/http.md "fetch") -------------------
//
// The WHATWG fetch over the same capability as openhuman.http. Without the permission these globals do
// not exist (a ReferenceError at run time). HTTP error statuses resolve with `ok === false`; refusals,
// transport failures, caps and timeouts reject with a TypeError whose `cause` is the Skillbox.HostError.

declare namespace Skillbox {
  type HeadersInit = Headers | Iterable<readonly [string, string]> | { [name: string]: string };
  /** A string (sent as UTF-8, Content-Type text/plain;charset=UTF-8 unless given) or bytes (sent as is). */
  type BodyInit = string | ArrayBuffer | ArrayBufferView;

  interface RequestInit {
    /** Default 'GET'; must be allowed by `permissions.http.methods`. */
    method?: string;
    headers?: HeadersInit;
    /** None on GET and HEAD. */
    body?: BodyInit | null;
    signal?: AbortSignal | null;
    /** Only 'follow': skillbox follows redirects itself, checking each hop against the allowlist. */
    redirect?: 'follow';
  }

  interface ResponseInit {
    /** 200 to 599. */
    status?: number;
    statusText?: string;
    headers?: HeadersInit;
  }

  interface Body {
    /** True once text(), json(), arrayBuffer() or bytes() read the body: a second read rejects. */
    readonly bodyUsed: boolean;
    text(): Promise<string>;
    /** Rejects with a SyntaxError when the body is not JSON, whatever the status. */
    json<T = JsonValue>(): Promise<T>;
    arrayBuffer(): Promise<ArrayBuffer>;
    bytes(): Promise<Uint8Array>;
  }
}

/** Header names are case-insensitive (stored lower-cased); `get` joins repeated values with ", ". */
declare class Headers implements Iterable<[string, string]> {
  constructor(init?: Skillbox.HeadersInit);
  append(name: string, value: string): void;
  delete(name: string): void;
  get(name: string): string | null;
  getSetCookie(): string[];
  has(name: string): boolean;
  set(name: string, value: string): void;
  forEach(callback: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void;
  /** Sorted by name, repeated names joined. */
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}

declare class Request implements Skillbox.Body {
  constructor(input: string | Request, init?: Skillbox.RequestInit);
  /** The URL as given (the capability parses it when the request is sent). */
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly signal: AbortSignal;
  readonly redirect: 'follow';
  readonly bodyUsed: boolean;
  text(): Promise<string>;
  json<T = Skillbox.JsonValue>(): Promise<T>;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array>;
  clone(): Request;
}

/** The whole body has arrived (within permissions.http.max_response_bytes) when fetch resolves. */
declare class Response implements Skillbox.Body {
  constructor(body?: Skillbox.BodyInit | null, init?: Skillbox.ResponseInit);
  static json(data: unknown, init?: Skillbox.ResponseInit): Response;
  static error(): Response;
  readonly status: number;
  readonly statusText: string;
  /** status is 200 to 299. */
  readonly ok: boolean;
  /** Immutable on a response from fetch. */
  readonly headers: Headers;
  /** The final URL, after redirects. */
  readonly url: string;
  readonly redirected: boolean;
  readonly type: 'basic' | 'default' | 'error';
  readonly bodyUsed: boolean;
  text(): Promise<string>;
  json<T = Skillbox.JsonValue>(): Promise<T>;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array>;
  clone(): Response;
}

/** Aborting rejects a pending fetch with `reason` (default: an Error named "AbortError", code 20). */
declare class AbortSignal {
  private constructor();
  static abort(reason?: unknown): AbortSignal;
  /** Aborts after `ms` milliseconds with an Error named "TimeoutError" (code 23). */
  static timeout(ms: number): AbortSignal;
  /** Aborts when the first of `signals` does, with its reason. */
  static any(signals: Iterable<AbortSignal>): AbortSignal;
  readonly aborted: boolean;
  readonly reason: unknown;
  onabort: ((event: { type: 'abort'; target: AbortSignal }) => void) | null;
  throwIfAborted(): void;
  addEventListener(type: 'abort', listener: (event: { type: 'abort'; target: AbortSignal }) => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: (event: { type: 'abort'; target: AbortSignal }) => void): void;
}

declare class AbortController {
  constructor();
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}

/**
 * Resolves when the response and its whole body have arrived, whatever the HTTP status. Rejects with a
 * TypeError (its `cause` the Skillbox.HostError: PermissionDenied, PayloadTooLarge, Timeout, ...) when
 * the request is refused or fails, with the signal's reason when aborted, and with a TypeError for
 * arguments it cannot take. Never throws synchronously.
 */
declare function fetch(input: string | Request, init?: Skillbox.RequestInit): Promise<Response>;
