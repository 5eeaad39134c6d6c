export default function () {
  const s = "ab".repeat(20000); const t = new Float64Array(50000).map((_, i) => -i);
  t.sort(); return [s.indexOf("ba".repeat(400) + "c"), JSON.stringify({s: s.slice(0, 10), r: /a(b+)+$/.test(s)}),
    Object.keys(globalThis), typeof fs, String.fromCharCode(0xd800)];
}
