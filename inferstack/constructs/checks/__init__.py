"""Checks over rendered Kubernetes manifests (plain dicts), the way the API server and controllers would judge
them: references that must resolve, and Pod Security admission. Pure functions; they import nothing of ours but
each other, so a plain cdk8s user can run them over ``chart.to_json()``."""
