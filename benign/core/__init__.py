"""The infrastructure both halves stand on, in reading order:

1. ``registry.py``: the one list of models, data-source kinds and backbone kinds.
2. ``schema.py``: every Parquet table's columns, and the one reader and writer.
3. ``io.py``: atomic writes and job logs.
4. ``fingerprint.py``: a rule's code version, so that editing a module reruns exactly its jobs.
5. ``device.py``: the device a job runs on, and its measured memory peaks.
6. ``stopping.py``: the scheduler's notice before a time limit, turned into a checkpoint.
7. ``job_state.py``: a training job's checkpoints and finished work, kept until the workflow has its outputs.
"""
