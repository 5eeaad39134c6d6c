// expect: 2
// W1: the lifecycle of a sandbox around the smallest program.
return 1 + 1;
