"""The API server: the ``kubernetes`` client behind one small wrapper (:mod:`.client`), the
kinds the backend creates, reads or deletes (:mod:`.kinds`), and who the caller is
(:mod:`.identity`)."""
