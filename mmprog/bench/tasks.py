"""The CoNLL tasks the CRF benches train and score on: columns, training file and test files under the data root
(shared by ``bench crf`` and ``bench certify``)."""

TASKS = {
    # name: (columns, train, tests)
    "esp": ("form/pos/ne", "conll2002/esp.train.gz", {"testa": "conll2002/esp.testa.gz",
                                                     "testb": "conll2002/esp.testb.gz"}),
    "chunk": ("form/pos/chunk", "conll2000/train.txt.gz", {"test": "conll2000/test.txt.gz"}),
}
