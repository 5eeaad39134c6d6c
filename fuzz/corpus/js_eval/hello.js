export default function (input) { return { greeting: "hi " + JSON.stringify(input) }; }
