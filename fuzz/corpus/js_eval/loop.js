export default function () { let s = 0; for (;;) s++; }
