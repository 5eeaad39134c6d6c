// The host API an OpenHuman bundle calls, as skillbox provides it (docs/openhuman.md "How each call
// maps"). Ambient declarations for the example bundles' TypeScript sources; nothing here is emitted.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface ToolDefinition<A = any> {
  name: string;
  description?: string;
  input_schema?: Json;
  inputSchema?: Json;
  execute(this: Skill, args: A): unknown;
}

/** What start() receives, and what getCredential() returns: placeholders only, never a secret. */
interface OAuthCredential {
  credentialId: string;
  accessToken: string;
  baseUrl: string;
  [key: string]: unknown;
}
interface AuthCredential {
  mode: string;
  credentials: { [field: string]: string };
  [key: string]: unknown;
}
interface StartArgs {
  oauth: OAuthCredential | null;
  auth: AuthCredential | null;
}

interface Skill {
  tools?: ToolDefinition[];
  init?(this: Skill): unknown;
  start?(this: Skill, args: StartArgs): unknown;
  stop?(this: Skill): unknown;
  [hook: string]: unknown;
}

interface SyncResponse {
  status: number;
  statusText: string;
  headers: { [name: string]: string };
  body: string;
}
interface FetchOptions {
  method?: string;
  headers?: { [name: string]: string };
  body?: unknown;
  /** Seconds (a value above 600 is read as milliseconds). */
  timeout?: number;
}

declare const state: {
  get(key: string): any;
  set(key: string, value: unknown): void;
  setPartial(values: { [key: string]: unknown }): void;
  delete(key: string): void;
  keys(): string[];
};

declare const db: {
  exec(sql: string, params?: unknown[]): number;
  get(sql: string, params?: unknown[]): any;
  all(sql: string, params?: unknown[]): any[];
  kvGet(key: string): any;
  kvSet(key: string, value: unknown): void;
};

declare const net: { fetch(url: string, options?: FetchOptions): SyncResponse };

interface ResponseLike {
  status: number;
  statusText: string;
  ok: boolean;
  url: string;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  json(): Promise<any>;
  arrayBuffer(): Promise<ArrayBuffer>;
}
declare function fetch(url: string, options?: Omit<FetchOptions, "timeout">): Promise<ResponseLike>;

declare const data: {
  read(name: string): string;
  write(name: string, text: string): void;
};

declare const platform: {
  os(): string;
  env(name: string): string | null;
  notify(title: string, body?: string): void;
};

declare const cron: {
  register(id: string, expr: string): boolean;
  unregister(id: string): boolean;
  list(): string[];
};

declare const skills: {
  list(): unknown[];
  callTool(skill: string, tool: string, args?: unknown): never;
};

declare const memory: {
  insert(entry: { title: string; content: string; sourceType?: string; metadata?: Json; priority?: number }): boolean;
};

declare const oauth: {
  getCredential(): OAuthCredential | null;
  fetch(path: string, options?: FetchOptions): { status: number; headers: { [name: string]: string }; body: string };
  revoke(): boolean;
};

declare const auth: { getCredential(): AuthCredential | null };

declare const __skillId: string;

declare const console: {
  log(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
  debug(...args: unknown[]): void;
};

declare function setTimeout(callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): number;
declare function clearTimeout(id: number): void;
declare function setInterval(callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): number;
declare function clearInterval(id: number): void;
declare function atob(data: string): string;
declare function btoa(text: string): string;

declare class TextEncoder {
  encode(text?: string): Uint8Array;
}
declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  decode(bytes?: Uint8Array): string;
}

declare var self: typeof globalThis;
declare var window: typeof globalThis;
declare var global: typeof globalThis;
declare var tools: ToolDefinition[] | undefined;
