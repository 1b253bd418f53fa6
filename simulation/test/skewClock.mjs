// Preloaded with `node --import` into a Driftline program a test starts: moves the whole process's wall
// clock by DRIFTLINE_TEST_CLOCK_SKEW_MS, as on a machine whose clock is wrong. Only tests use it.
const skew = Number(process.env.DRIFTLINE_TEST_CLOCK_SKEW_MS ?? 0);
const RealDate = Date;
class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + skew);
    else super(...args);
  }
  static now() {
    return RealDate.now() + skew;
  }
}
globalThis.Date = SkewedDate;
