"""The controller: one broker, elected through ZooKeeper, that elects partition leaders.

`controller.py` holds the elected role and its reactions to cluster changes, `election.py` the
rules for choosing leaders and ISRs (pure functions), `event_thread.py` the one thread the
controller's work runs on, in order.
"""
