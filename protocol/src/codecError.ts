/** Why bytes are not a usable bundle or batch. Maps onto the ERRORS table by `code`. */
export type CodecErrorCode = 'bad-bundle' | 'unsupported-version' | 'unknown-kind';

export class BundleCodecError extends Error {
  constructor(
    readonly code: CodecErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'BundleCodecError';
  }
}

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: BundleCodecError };

export const fail = (code: CodecErrorCode, message: string): { ok: false; error: BundleCodecError } => ({
  ok: false,
  error: new BundleCodecError(code, message),
});
