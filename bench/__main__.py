"""`python -m bench`: run every benchmark and write the results (see bench/run_all.py);
`python -m bench scale [...]`: the scale benchmark beside Kafka 3.9.0 (see bench/scale.py)."""
import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["scale"]:
        del sys.argv[1]
        from bench.scale import main
    else:
        from bench.run_all import main
    main()
