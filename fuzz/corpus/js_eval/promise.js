export default async function () { await new Promise((r) => setTimeout(r, 5)); throw new TypeError("no"); }
