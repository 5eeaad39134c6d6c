export default async function () {
  const r = []; for (const f of [() => fs.readFile("x"), () => http.get("http://127.0.0.1:1/"), () => store.get("k"), () => env.get("HOME")])
    try { r.push(await f()); } catch (e) { r.push(e.name + ": " + e.message); }
  console.log("done", r); return r;
}
