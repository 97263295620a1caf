"""The user guide's API block says what the fit reads (issue 68, walk 8)."""
import inspect
import re
from pathlib import Path

from iclr25.cox import cli

GUIDE = Path(__file__).parents[2] / "docs" / "guide" / "cox.md"


def test_api_block_names_the_pairs_column_order_the_cli_uses():
    # the block said "pairs (P, 2); -1 = unlabelled": which column is which was unsaid, and
    # "-1 = unlabelled" read as about the pairs (it is y_oom's)
    block = re.search(r"```python\n(.*?)```", GUIDE.read_text(), re.S).group(1)
    assert "pairs: (P, 2) rows (im_row, oom_row)" in block
    assert "y_oom: -1 = unlabelled" in block
    # and what the 10 is: walk 8 kept COX(10) for 4 classes (predict_proba gave 10 columns)
    assert "cox.COX(n_classes=10," in block
    assert "(im_row, oom_row)" in inspect.signature(cli.fit).parameters["pairs"].default.help
