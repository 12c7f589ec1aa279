"""``rankscope synth``: synthetic questions that keep the id of the chunk they came from."""
