// Compile-time test of types/skillbox.d.ts: every line without a marker must type-check, and every
// `@ts-expect-error` line must NOT (tsc reports an unused @ts-expect-error as an error). Run by
// scripts/typecheck.sh; never executed.

// ---- globals and log ----
log('hello', 1, { a: [1, 2] });
console.log('x');
console.info('x');
console.warn('x');
console.error(new Error('x'));
console.debug('x');
// @ts-expect-error there is no console.table
console.table([]);

// ---- store ----
store.set('greeting', { text: 'hello', n: 1, tags: ['a'], nested: { ok: true } });
store.set('n', 42);
store.set('s', 'text');
store.set('nothing', null);
interface Note {
  title: string;
  done: boolean;
}
const note: Note = { title: 't', done: false };
store.set('note', note); // interfaces are accepted (no index signature needed)
const g: Skillbox.JsonValue | undefined = store.get('greeting');
const typed = store.get<{ text: string }>('greeting');
if (typed !== undefined) {
  const text: string = typed.text;
  log(text, g);
}
const existed: boolean = store.delete('greeting');
const keys: string[] = store.keys();
const prefixed: string[] = store.keys('gr');
log(existed, keys, prefixed);
// @ts-expect-error undefined is not JSON
store.set('bad', undefined);
// @ts-expect-error symbols are not JSON
store.set('bad', Symbol('x'));
// @ts-expect-error BigInt is not JSON
store.set('bad', 10n);
// @ts-expect-error keys are strings
store.get(1);
// @ts-expect-error get may return undefined
const notUndefined: Skillbox.JsonValue = store.get('x');
// @ts-expect-error delete returns a boolean
const deleted: string = store.delete('x');
openhuman.store.set('same', 1);

// ---- env ----
const key: string | undefined = env.get('WEATHER_API_KEY');
const viaNamespace: string | undefined = openhuman.env.get('WEATHER_API_KEY');
// @ts-expect-error env.get may return undefined
const mustBeString: string = env.get('X');
// @ts-expect-error names are strings
env.get(42);
log(key, viaNamespace);

// ---- errors ----
try {
  store.set('k', 1);
} catch (e) {
  const err = e as Skillbox.HostError;
  if (err.name === 'QuotaExceeded') {
    const code: 'EQUOTA' = err.code; // narrowed by name
    log(code);
  }
  const anyCode: Skillbox.HostErrorCode = err.code;
  // @ts-expect-error not an error name skillbox uses
  const wrongName: Skillbox.HostErrorName = 'Forbidden';
  log(anyCode, wrongName);
}
const codes: Skillbox.ErrorCodes = {
  PermissionDenied: 'EACCES',
  NotFound: 'ENOENT',
  QuotaExceeded: 'EQUOTA',
  InvalidArgument: 'EINVAL',
  PayloadTooLarge: 'E2BIG',
  Timeout: 'ETIMEDOUT',
  NetworkError: 'ENET',
  AlreadyExists: 'EEXIST',
  NotEmpty: 'ENOTEMPTY',
  IoError: 'EIO',
};
log(codes);

// ---- fs ----
async function useFs(): Promise<void> {
  const fs = openhuman.fs;
  const text: string = await fs.readFile('notes.txt');
  const text2: string = await fs.readFile('notes.txt', { encoding: 'utf8' });
  const bytes: Uint8Array = await fs.readFile('image.png', { encoding: 'binary' });
  await fs.writeFile('a.txt', 'text');
  await fs.writeFile('b.bin', new Uint8Array([1, 2]));
  await fs.appendFile('a.txt', 'more');
  const entries = await fs.readdir('.');
  for (const e of entries) {
    const t: 'file' | 'directory' | 'other' = e.type;
    log(e.name, t);
  }
  const st = await fs.stat('a.txt');
  const n: number = st.size + st.mtimeMs;
  const there: boolean = await fs.exists('a.txt');
  await fs.mkdir('dir', { recursive: true });
  await fs.remove('dir', { recursive: true });
  await fs.rename('a.txt', 'c.txt');
  log(text, text2, bytes, n, there);
  // @ts-expect-error binary reads are Uint8Array, not string
  const wrong: string = await fs.readFile('x', { encoding: 'binary' });
  // @ts-expect-error data is a string or Uint8Array
  await fs.writeFile('x', 42);
  // @ts-expect-error unknown encoding
  await fs.readFile('x', { encoding: 'latin1' });
  log(wrong);
}

// ---- http ----
async function useHttp(): Promise<void> {
  const http = openhuman.http;
  const r = await http.get('https://api.example.com/v1/x', { headers: { accept: 'text/plain' }, timeoutMs: 1000 });
  const status: number = r.status;
  const body: string = r.body;
  const type: string | undefined = r.headers['content-type'];
  const finalUrl: string = r.url;
  const j = await http.get('https://api.example.com/v1/x', { responseType: 'json' });
  const parsed: Skillbox.JsonValue = j.body;
  const b = await http.post('https://api.example.com/v1/x', new Uint8Array([1]), { responseType: 'binary' });
  const raw: Uint8Array = b.body;
  const q = await http.request({ method: 'PUT', url: 'https://api.example.com/v1/x', body: 'x', headers: {} });
  const plain: string = q.body;
  const serializable: string = JSON.stringify(r);
  log(status, body, type, finalUrl, parsed, raw, plain, serializable, r.statusText);
  // @ts-expect-error a binary body is not a string
  const notText: string = b.body;
  // @ts-expect-error request needs a url
  await http.request({ method: 'GET' });
  // @ts-expect-error unknown response type
  await http.get('https://x/', { responseType: 'stream' });
  log(notText);
}

// ---- timers, encoding, crypto ----
const t = setTimeout(() => log('later'), 10);
clearTimeout(t);
const i = setInterval((a: number) => log(a), 10, 1);
clearInterval(i);
queueMicrotask(() => log('soon'));
// @ts-expect-error strings are never evaluated
setTimeout('log(1)', 10);
const encoded: Uint8Array = new TextEncoder().encode('héllo');
const decoded: string = new TextDecoder('utf-8', { fatal: true }).decode(encoded);
const into = new TextEncoder().encodeInto('x', new Uint8Array(4));
const b64: string = btoa('hi');
const back: string = atob(b64);
const random = crypto.getRandomValues(new Uint32Array(4));
const uuid: string = crypto.randomUUID();
log(decoded, into.read + into.written, back, random[0], uuid);

// ---- what does not exist ----
// @ts-expect-error no require
require('fs');
// @ts-expect-error no process
process.exit(1);
// @ts-expect-error no XMLHttpRequest (fetch is declared: it exists with permissions.http.fetch)
new XMLHttpRequest();
// @ts-expect-error no document
document.title;

// ---- a skill export ----
const handler: Skillbox.Handler<{ name: string }> = async (input) => ({ greeting: `hello ${input.name}` });
export default handler;
// An interface input (no index signature) and an interface output.
interface WeatherInput {
  city?: string;
  days?: number;
}
interface WeatherOutput {
  city: string;
  forecast: number[];
}
export const weather: Skillbox.Handler<WeatherInput, WeatherOutput> = async (input) => ({
  city: input.city ?? 'Berlin',
  forecast: [input.days ?? 1],
});
export const syncHandler: Skillbox.Handler<WeatherInput> = (input) => input.city;
// @ts-expect-error the input is what the handler declares: no property `town`
export const wrongField: Skillbox.Handler<WeatherInput> = (input) => input.town;
export const asyncTyped: Skillbox.AsyncHandler<WeatherInput, WeatherOutput> = async (input) => ({
  city: input.city ?? 'Berlin',
  forecast: [],
});
// @ts-expect-error an AsyncHandler returns a promise
export const notAsync: Skillbox.AsyncHandler<WeatherInput> = (input) => input.city;

// ---- fetch (with permissions.http.fetch) ----
async function useFetch(): Promise<number> {
  const controller = new AbortController();
  const headers = new Headers({ accept: 'application/json' });
  headers.append('x-trace', '1');
  const res = await fetch('https://api.example.com/v1/items', {
    method: 'POST',
    headers,
    body: JSON.stringify({ a: 1 }),
    signal: controller.signal,
  });
  const items = await res.json<{ n: number }>();
  const bytes: Uint8Array = await (await fetch(new Request('https://api.example.com/bin'))).bytes();
  const nf: boolean = (await fetch('https://api.example.com/missing', { signal: AbortSignal.timeout(1000) })).ok;
  // @ts-expect-error only redirect: 'follow' is supported
  await fetch('https://api.example.com/', { redirect: 'manual' });
  // @ts-expect-error a plain object is not a body (JSON.stringify it)
  await fetch('https://api.example.com/', { method: 'POST', body: { a: 1 } });
  // @ts-expect-error AbortSignal has no public constructor
  new AbortSignal();
  for (const [name, value] of res.headers) log(name, value);
  log(new Response('x', { status: 201 }).ok, Response.json({ a: 1 }).status, nf);
  return items.n + bytes.length;
}
export { useFs, useHttp, useFetch };
