"""What both halves stand on (the bottom layer: it imports no other package of benign, and
every package may import it), in reading order:

1. ``schema.py``: the Parquet tables' one reader and writer (each half defines its columns).
2. ``rng.py``: the random streams every draw comes from.
3. ``io.py``: atomic writes and job logs.
4. ``fingerprint.py``: a rule's code version, so that editing a module reruns exactly its jobs.
5. ``device.py``: the device a job runs on, and its measured memory peaks.
6. ``stopping.py``: the scheduler's notice before a time limit, turned into a checkpoint.
7. ``job_state.py``: a training job's checkpoints and finished work, kept until the workflow has its outputs.
8. ``job_time.py``: what a run's training jobs took, per part, as the forecast names the parts.
"""
