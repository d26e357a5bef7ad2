"""Gates over what the cluster runs, not only what inferstack writes: the Helm releases rendered offline with the helm
the kubectl provider runs at deploy (:mod:`.helm`, :mod:`.releases`), the pods each operator makes from our custom
resources (:mod:`.projections`, :mod:`.lws`, :mod:`.nim`, :mod:`.dynamo`), the operators' own calls into them
(:mod:`.operator_calls`), AIBrix's adapter load path (:mod:`.aibrix`), the kubelet's view of mounted volumes
(:mod:`.kubelet`), the checkers over manifests (:mod:`.references`, :mod:`.pod_security`, :mod:`.network`,
:mod:`.pods`) and the checks over all of them together (:mod:`.cluster_view`).

Nothing in synth imports this package (``tests/test_imports.py`` checks it); the tests do.
"""
