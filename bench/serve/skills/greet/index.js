// The trivial skill of bench/serve: the same function text runs in every server of the benchmark.
export default (input) => ({ greeting: "hello " + input.name, length: input.name.length });
