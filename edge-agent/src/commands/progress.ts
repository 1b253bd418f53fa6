import cliProgress from 'cli-progress';

/** A progress bar (bytes, rate, time left) for blob uploads on a TTY; nothing when stderr is not a TTY. */
export function uploadProgressBar(): ((sha256: string, sent: number, total: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  let bar: cliProgress.SingleBar | null = null;
  let current = '';
  const started = Date.now();
  return (sha256, sent, total) => {
    if (sha256 !== current) {
      bar?.stop();
      current = sha256;
      bar = new cliProgress.SingleBar(
        {
          stream: process.stderr,
          format: `upload ${sha256.slice(0, 12)} [{bar}] {percentage}% {value}/{total} B {rate} ETA {eta_formatted}`,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(total, 0, { rate: '' });
    }
    const secs = Math.max(0.001, (Date.now() - started) / 1000);
    bar?.update(sent, { rate: `${Math.round(sent / secs / 1024)} KiB/s` });
    if (sent >= total) {
      bar?.stop();
      bar = null;
      current = '';
    }
  };
}
