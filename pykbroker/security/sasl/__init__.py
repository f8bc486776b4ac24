"""SASL as Kafka 3.9's broker does it: the per-connection authenticator (`authenticator.py`, Kafka's
SaslServerAuthenticator), mechanisms PLAIN (`plain.py`) and SCRAM-SHA-256/512 (`scram.py`), JAAS
config parsing (`jaas.py`), the broker's SASL settings per listener (`config.py`) and the client
side brokers use to authenticate to each other (`client.py`).

The package itself holds only what a broker without SASL listeners reads (the SASL security
protocols), so that such a broker loads none of the modules above.
"""

SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
