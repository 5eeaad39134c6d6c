export default function () { const a = []; for (;;) a.push("x".repeat(1000)); }
