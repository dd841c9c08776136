def main(argv=None):
    import sys
    print("mmprog", __import__("mmprog").__version__)
    return 0
