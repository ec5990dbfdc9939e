"""The transformers Trainer and TRL path: their arguments and what runs from them."""
