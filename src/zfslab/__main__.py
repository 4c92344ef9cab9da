from zfslab.cli import entry

entry()
