"""`python -m compat`: the compatibility suite, once the client libraries it drives are here.

Without them it says in one line what to install, instead of reporting every cell as skipped.
"""
import importlib.util
import sys

CLIENT_LIBRARIES = {"kafka": "kafka-python", "confluent_kafka": "confluent-kafka",
                    "aiokafka": "aiokafka"}


def missing_client_libraries() -> list[str]:
    return [package for module, package in CLIENT_LIBRARIES.items()
            if importlib.util.find_spec(module) is None]


missing = missing_client_libraries()
if missing:
    print(f"compat: the client libraries {', '.join(missing)} are not installed: run `make compat` "
          f"(or `pip install -e '.[compat]'`) first", file=sys.stderr)
    sys.exit(2)

from .run import main  # noqa: E402 - only once the clients are known to be installed

sys.exit(main())
