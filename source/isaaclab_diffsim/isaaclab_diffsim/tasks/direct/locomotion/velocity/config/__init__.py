"""One folder per robot: its task configs (``flat_env_cfg.py``, ``rough_env_cfg.py``), ``agents/`` and the
gymnasium registration of its task ids (``__init__.py``)."""
