"""Share groups' state (KIP-932): the persister of share-partition state and, in `partitions/`,
the in-flight records of each share partition this broker leads."""
