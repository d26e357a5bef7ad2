// Preloaded into jsii's Node kernel by inferstack's CDK app (NODE_OPTIONS=--require; inferstack/kernel/node_options.py).
//
// V8 runs WebAssembly as Liftoff (baseline) code first and recompiles the functions that run hot with TurboFan, the
// optimizing compiler, on background threads (dynamic tier-up). aws-cdk-lib 2.275.0 validates every template at synth
// with @aws/cloudformation-validate 1.12.1, 8.9 MB of WebAssembly whose start-up runs hot: on this 2-core machine the
// tier-up took the second core while the plugin was built (2.9-3.2 s of CPU for it, 2.0-2.5 s with this file) and
// held the kernel's exit 0.6-0.7 s (1.1-1.2 s of CPU after `{"exit":0}`; 0.01 s with this file), measured on the bare
// EKS app of bench/. Liftoff alone runs the same code with the same results, only slower per call; the validation
// itself was not slower (inferstack's five templates 0.16 s, 100 workloads unchanged).
//
// The flag is set here, after Node started and before any WebAssembly compiles: V8 reads it when it compiles a
// module, and Node 20 keeps V8's flags writable (--no-freeze-flags-after-init). Flags that change V8's threads or
// heap cannot be set this way (--single-threaded aborted V8 when tried).
'use strict';
require('v8').setFlagsFromString('--liftoff-only');
