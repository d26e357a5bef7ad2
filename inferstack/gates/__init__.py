"""Gates over what the cluster runs, not only what inferstack writes: the Helm releases rendered offline with the helm
the kubectl provider runs at deploy (:mod:`.helm`, :mod:`.releases`), the pods each operator makes from our custom
resources (:mod:`.projections`), the kubelet's view of mounted volumes (:mod:`.kubelet`) and the checks over all of
them together (:mod:`.rendered`).

Nothing in synth imports this package: the tests and ``python -m inferstack.gates`` do.
"""
