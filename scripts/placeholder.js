#!/usr/bin/env node
// Placeholder for root scripts that later issues fill in; exits 0 so the quick start stays true.
const what = process.argv[2];
const coming = {
  start:
    'npm start will run the demo (hub, relay, three agents, emulated links) once the simulation issue lands.',
  bench: 'npm run bench will compare Driftline against its baselines once the bench issue lands.',
};
console.log(coming[what] ?? `nothing to do for '${what}'`);
