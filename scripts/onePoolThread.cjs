// Preloaded (`node --require`) in the simulation's default-lane workers, before anything asks libuv's pool
// for work: one pool thread, so file and crypto work completes in the order it was asked for and a
// deterministic world's run replays (docs/decisions/540-deterministic-world.md).
process.env.UV_THREADPOOL_SIZE = '1';
