// unbzip2-stream ships no types. It returns a classic `through` stream: synchronous write()/end()
// that emit 'data', 'end' and 'error' events from inside those calls.
declare module 'unbzip2-stream' {
  import type { Stream } from 'node:stream';
  interface ThroughStream extends Stream {
    write(chunk: Buffer): boolean;
    end(): void;
    pause(): void;
    resume(): void;
  }
  function unbzip2Stream(): ThroughStream;
  export default unbzip2Stream;
}
