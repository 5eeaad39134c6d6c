/// <reference path="./skillbox.d.ts" />
// {{id}}: greets whoever the input names and counts, in the store, how often it has greeted them.
//
//   npm install && npm run build                 compile index.ts into dist/index.js (the entry)
//   skillbox run . --input '{"name": "Ada"}'     run it once
//   skillbox test .                              run the tests in skill.test.json
//
// The API (store, env, log, openhuman.http, openhuman.fs, ...) is declared in skillbox.d.ts; what each
// part may do is granted in skill.json under "permissions".

interface Input {
  name?: string;
}

interface Output {
  greeting: string;
  visits: number;
}

const greet: Skillbox.Handler<Input | null, Output> = (input) => {
  const name: unknown = input?.name ?? 'world';
  if (typeof name !== 'string' || name.trim() === '') {
    throw new TypeError('name: expected a non-empty string');
  }
  const key = 'visits:' + name.trim().toLowerCase();
  const visits = store.increment(key);  // atomic: runs at the same time never lose a visit
  log(`greeting ${name.trim()} (visit ${visits})`);
  return { greeting: `Hello, ${name.trim()}!`, visits };
};

export default greet;
