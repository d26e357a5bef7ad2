"""cdk8s charts composing inferstack's constructs; each becomes one manifest resource on the cluster."""
