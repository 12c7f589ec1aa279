"""Small real test collections shipped with rankscope (see ``README.md`` here for sources and licences).

>>> from rankscope.datasets import load_dataset
>>> load_dataset("cmrc2018").name
'cmrc2018'
"""

from rankscope.datasets.loader import dataset_info, list_datasets, load_dataset

__all__ = ["dataset_info", "list_datasets", "load_dataset"]
