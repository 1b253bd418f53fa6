/** `1 cell`, `19 cells`, `1,204 cells`: a count with its noun in the right number (`plural` when not `+s`). */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? noun : plural}`;
}
