// Preloaded with `node --import` to make a process believe it has 4 cores: how a test runs the
// suite as a machine with more cores than this one would.
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';

const cpu = os.cpus()[0];
os.availableParallelism = () => 4;
os.cpus = () => Array.from({ length: 4 }, () => cpu);
syncBuiltinESMExports();
