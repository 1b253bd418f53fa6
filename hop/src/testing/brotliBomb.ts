/**
 * A brotli bomb for tests of inflate caps (S8): 481 bytes that inflate to 300 MiB of zeros, made once by
 * `brotliCompressSync(Buffer.alloc(300 * 1024 * 1024), quality 5)` and kept here, so a test does not
 * spend seconds of CPU compressing 300 MiB each time it runs (tens of seconds beside a whole run on a slow
 * machine). `test/brotliBomb.test.ts` checks it still inflates to exactly that.
 */
const BOMB_BASE64 = [
  'y///PwAkAOKxQHLv//j//weABEAcFoDu/R////8AkACIwwLQvf/j//8fABIAcVgAuvd//P//A0ACIA4LQPf+j///fwBIAMRh',
  'Aeje//H//w8ACYA4LADd+z/+//8BIAEQhwWge//H//8/ACQA4rAAdO//+P//B4AEQBwWgO79H////wCQAIjDAtC9/+P//x8A',
  'EgBxWAC693/8//8DQAIgDgtA9/6P//9/AEgAxGEB6N7/8f//DwAJgDgsAN37P/7//wEgARCHBaB7/8f//z8AJADisAB07//4',
  '//8HgARAHBaA7v0f////AJAAiMMC0L3/4///HwASAHFYALr3f/z//wNAAiAOC0D3/o///38ASADEYQHo3v/x//8PAAmAOCwA',
  '3fs//v//ASABEIcFoHv/x///PwAkAOKwAHTv//j//weABEAcFoDu/R////8AkACIwwLQvf/j//8fABIAcVgAuvd//P//A0AC',
  'IA4LQPf+j///fwBIAMRhAeje//H//w8ACYA4LADd+z/+//8BIAEQhwWge//H//8/ACQA4rAAdO//+P//B4AEQBwWgO79H///',
  '/wCQAIjDAtC9/+P//x8AEgBxWAC693/8//8DQAIgDgtA9/4v//9/AEgAxGEB6N7/AA==',
].join('');

/** Bytes of zeros the bomb inflates to. */
export const BROTLI_BOMB_INFLATED_BYTES = 300 * 1024 * 1024;

/** A fresh copy of the bomb's bytes. */
export function brotliBomb(): Buffer {
  return Buffer.from(BOMB_BASE64, 'base64');
}
