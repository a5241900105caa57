// What main (over IPC) and `holdfast serve` (over HTTP) both call: one async function per channel.
import type { ArgsOf, Channel, ResultOf } from './contract';

export type Handlers = { [C in Channel]: (args: ArgsOf<C>) => Promise<ResultOf<C>> };
