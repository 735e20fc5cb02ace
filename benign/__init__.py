"""benign: reproduction of "Benign Overfitting in Token Selection of Attention Mechanism"."""

__version__ = "0.1.0"
