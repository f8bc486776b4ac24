"""`python -m bench`: run every benchmark and write the results (see bench/run_all.py)."""
from bench.run_all import main

if __name__ == "__main__":
    main()
