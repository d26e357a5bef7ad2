"""cdk8s constructs for inference workloads. They depend on the catalog only — never on aws-cdk-lib stacks:
AWS values (role ARNs, bucket names) come in as props."""
