"""What the Spark test modules share: stopping a session together with its JVM."""


def stop_spark(session) -> None:
    """Stops the session and its JVM, so that a later session starts a JVM of its own, with its
    own settings (`spark.jars` and `spark.jars.packages` count only when the JVM starts)."""
    from pyspark import SparkContext

    session.stop()
    gateway = SparkContext._gateway
    if gateway is not None:
        gateway.shutdown()
        gateway.proc.stdin.close()  # the JVM exits when its standard input ends
        gateway.proc.wait(60)
        SparkContext._gateway = None
        SparkContext._jvm = None
