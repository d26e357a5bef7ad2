"""inferstack: infrastructure as code for serving large language models on Amazon EKS.

Layers (imports point one way): ``catalog`` (facts) → ``config`` (typed, validated input) → ``rules``
(synth-time checks) → ``constructs`` (cdk8s) → ``charts`` (cdk8s) → ``stacks`` (aws-cdk-lib).
"""

__version__ = "0.1.0"
