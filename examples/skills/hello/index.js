// hello: greets the name in its input. Grants no permissions: it can compute and log, nothing else.
//
//   skillbox run examples/skills/hello --input '{"name": "Ada"}'

export default function hello(input) {
  const name = input !== null && typeof input === "object" && typeof input.name === "string" ? input.name : "world";
  log(`greeting ${name}`);
  return { greeting: `Hello, ${name}!`, length: name.length };
}
