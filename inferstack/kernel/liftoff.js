// Preloaded into jsii's Node kernel by inferstack's CDK app (NODE_OPTIONS=--require; inferstack/kernel/node_options.py).
//
// V8 compiles WebAssembly twice: with Liftoff (its baseline compiler) before the first call, and again with TurboFan
// (the optimizing one) on background threads. aws-cdk-lib 2.275.0 validates every template at synth with
// @aws/cloudformation-validate 1.12.1, 8.9 MB of WebAssembly; TurboFan's compile of it occupied the machine's second
// core for the whole synth and held the kernel's exit for 0.6-0.7 s (1.1-1.2 s of CPU after `{"exit":0}`, measured
// on the bare EKS app of bench/). Liftoff alone runs the same code with the same results; only its speed differs, and
// the validation itself was not slower (inferstack's five templates 0.16 s, 100 workloads unchanged).
'use strict';
require('v8').setFlagsFromString('--liftoff-only');
