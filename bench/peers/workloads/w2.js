// expect: 27337
// W2: a small JSON transform: 1000 objects built, filtered, mapped and stringified.
const items = [];
for (let i = 0; i < 1000; i++) {
  items.push({ id: i, name: 'item' + i, price: i * 1.25, tags: ['a', 'b'], active: i % 3 !== 0 });
}
const out = items
  .filter((x) => x.active)
  .map((x) => ({ id: x.id, label: x.name.toUpperCase(), total: Math.round(x.price * 1.2) }));
return JSON.stringify(out).length;
