// The containerd messages as static code (protobufjs-cli's pbjs, static-module target), written
// to src/core/containerd/codecs.generated.ts by `npm run proto:json`. Why static: protobufjs's
// reflection generates each message's encoder and decoder with new Function() at run time, in
// every new process, and such code is never in the CLI's V8 code cache; a cold `holdfast images`
// spent ~15 ms of its CPU on that. Static code is part of the bundle, so it is cached like the
// rest. The reflection (descriptors.json) stays for the method tables and Any payloads.
import path from 'node:path';
import { createRequire } from 'node:module';
import { PROTO_FILES } from '../src/core/containerd/protoRoot';

export const CODECS_FILE = path.resolve(import.meta.dirname, '..', 'src', 'core', 'containerd', 'codecs.generated.ts');

const WRAPPER = path.resolve(import.meta.dirname, 'protoCodecs.wrapper.txt');

type Pbjs = { main(args: string[], cb: (err: Error | null, output?: string) => void): void };

/** What pbjs writes for our .proto files in dir (field names as written, like protoRoot.ts). */
export function codecsSource(dir: string): Promise<string> {
  const { pbjs } = createRequire(import.meta.url)('protobufjs-cli') as { pbjs: Pbjs };
  const args = [
    ...['--target', 'static-module', '--wrap', WRAPPER, '--dependency', 'protobufjs/minimal.js', '--lint', ''],
    // Only what the client calls: codecs and conversions (no services, verifiers, delimited forms or comments).
    ...['--keep-case', '--no-service', '--no-verify', '--no-delimited', '--no-comments', '--path', dir],
    ...PROTO_FILES.map((f) => path.join(dir, f)),
  ];
  return new Promise((resolve, reject) => pbjs.main(args, (err, out) => (err ? reject(err) : resolve(out ?? ''))));
}
