function f(n) { return f(n + 1) + 1; }
export default () => f(0);
