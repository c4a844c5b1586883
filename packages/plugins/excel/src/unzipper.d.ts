/** The one unzipper function the worker wraps (see zip-end.ts). */
declare module 'unzipper' {
  import type { Duplex } from 'node:stream';
  const unzipper: { Parse(opts?: { forceStream?: boolean; verbose?: boolean }): Duplex };
  export default unzipper;
}
