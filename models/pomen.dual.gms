$offlisting
$offdigit

EQUATIONS
	budget_0__hi
	budget_1__hi
	budget_2__hi
	budget_3__hi
	budget_4__hi
	budget_5__hi
	stationarity_0_
	stationarity_1_
	stationarity_2_
	stationarity_3_
	stationarity_4_
	stationarity_5_
	stationarity_6_
	stationarity_7_
	stationarity_8_
	stationarity_9_
	objective;

POSITIVE VARIABLES
	alpha_1_
	alpha_14_
	alpha_2_
	alpha_7_
	alpha_11_
	alpha_3_
	alpha_8_
	alpha_12_
	alpha_19_
	alpha_4_
	alpha_9_
	alpha_15_
	alpha_18_
	alpha_5_
	alpha_10_
	alpha_13_
	alpha_16_
	alpha_20_
	alpha_21_
	alpha_6_
	alpha_17_;

VARIABLES
	GAMS_OBJECTIVE
	w_0_
	w_1_
	w_2_
	w_3_
	w_4_
	w_5_
	w_6_
	w_7_
	w_8_
	w_9_;


budget_0__hi.. alpha_1_ + alpha_14_ =l= 1 ;
budget_1__hi.. alpha_2_ + alpha_7_ + alpha_11_ =l= 1 ;
budget_2__hi.. alpha_3_ + alpha_8_ + alpha_12_ + alpha_19_ =l= 1 ;
budget_3__hi.. alpha_4_ + alpha_9_ + alpha_15_ + alpha_18_ =l= 1 ;
budget_4__hi.. alpha_5_ + alpha_10_ + alpha_13_ + alpha_16_ + alpha_20_ + alpha_21_ =l= 1 ;
budget_5__hi.. alpha_6_ + alpha_17_ =l= 1 ;
stationarity_0_.. w_0_ + 1.3863251093272078*alpha_1_ + 0.780357950597452*alpha_2_ + 0.43703864450131713*alpha_3_ + (-1.8486886105988838)*alpha_4_ + (-2.83344858329923)*alpha_5_ + (-0.72295751712243517)*alpha_6_ + 0.87437024835832666*alpha_7_ + 0.78131140070042748*alpha_8_ + (-1.8531427437189669)*alpha_9_ + (-1.513087596217391)*alpha_10_ + 0.20917557487171307*alpha_11_ + 0.651697767007658*alpha_12_ + (-1.184117966757189)*alpha_13_ + 0.62327446253735219*alpha_14_ + (-0.39512206018200824)*alpha_15_ + (-2.504478953839028)*alpha_16_ + (-2.002392583645255)*alpha_17_ + (-1.4580206835369587)*alpha_18_ + 0.56665227819408659*alpha_19_ + (-1.6493306165420412)*alpha_20_ + (-0.32896962946020208)*alpha_21_ =e= 0 ;
stationarity_1_.. w_1_ + (-1.3863251093272078)*alpha_1_ + (-0.780357950597452)*alpha_2_ + (-0.43703864450131713)*alpha_3_ + 1.8486886105988838*alpha_4_ + 2.83344858329923*alpha_5_ + 0.72295751712243517*alpha_6_ + (-0.87437024835832666)*alpha_7_ + (-0.78131140070042748)*alpha_8_ + 1.8531427437189669*alpha_9_ + 1.513087596217391*alpha_10_ + (-0.20917557487171307)*alpha_11_ + (-0.651697767007658)*alpha_12_ + 1.184117966757189*alpha_13_ + (-0.62327446253735219)*alpha_14_ + 0.39512206018200824*alpha_15_ + 2.504478953839028*alpha_16_ + 2.002392583645255*alpha_17_ + 1.4580206835369587*alpha_18_ + (-0.56665227819408659)*alpha_19_ + 1.6493306165420412*alpha_20_ + 0.32896962946020208*alpha_21_ =e= 0 ;
stationarity_2_.. w_2_ + 1.5208851242749761*alpha_1_ + 0.5512141891752664*alpha_2_ + 0.69305839135071157*alpha_3_ + (-3.0465969463485307)*alpha_4_ + (-1.036482649390026)*alpha_5_ + (-2.9455805439548106)*alpha_6_ + (-0.19228506017854199)*alpha_7_ + 0.2644556303293035*alpha_8_ + (-2.3901220112721946)*alpha_9_ + (-0.40313002656511093)*alpha_10_ + 0.15922500991447772*alpha_11_ + 1.048431100390633*alpha_12_ + (-0.6617025720390349)*alpha_13_ + (-0.0413259793472436)*alpha_14_ + (-0.42986369482223)*alpha_15_ + (-1.2950551948639502)*alpha_16_ + (-0.18851919251246557)*alpha_17_ + (-1.9602583164499647)*alpha_18_ + (-0.09091707871061788)*alpha_19_ + (-0.3747800773509912)*alpha_20_ + 0.258572545473924*alpha_21_ =e= 0 ;
stationarity_3_.. w_3_ + (-1.5208851242749761)*alpha_1_ + (-0.5512141891752664)*alpha_2_ + (-0.69305839135071157)*alpha_3_ + 3.0465969463485307*alpha_4_ + 1.036482649390026*alpha_5_ + 2.9455805439548106*alpha_6_ + 0.19228506017854199*alpha_7_ + (-0.2644556303293035)*alpha_8_ + 2.3901220112721946*alpha_9_ + 0.40313002656511093*alpha_10_ + (-0.15922500991447772)*alpha_11_ + (-1.048431100390633)*alpha_12_ + 0.6617025720390349*alpha_13_ + 0.0413259793472436*alpha_14_ + 0.42986369482223*alpha_15_ + 1.2950551948639502*alpha_16_ + 0.18851919251246557*alpha_17_ + 1.9602583164499647*alpha_18_ + 0.09091707871061788*alpha_19_ + 0.3747800773509912*alpha_20_ + (-0.258572545473924)*alpha_21_ =e= 0 ;
stationarity_4_.. w_4_ + 2.6456675929681532*alpha_1_ + (-0.5225903900791968)*alpha_2_ + 1.8333369401026722*alpha_3_ + (-1.209316130079439)*alpha_4_ + 0.18360175470130713*alpha_5_ + 1.9045704463802084*alpha_6_ + (-1.4443157663376163)*alpha_7_ + (-0.31392281453642779)*alpha_8_ + (-2.4976775938289935)*alpha_9_ + (-2.0199081259453435)*alpha_10_ + (-0.54084558468580768)*alpha_11_ + 1.179508330684333*alpha_12_ + (-0.43643524714322124)*alpha_13_ + 2.3250307746388343*alpha_14_ + (-0.69604272396286848)*alpha_15_ + 1.7670746335034293*alpha_16_ + 0.6331940901922267*alpha_17_ + (-1.801634869866125)*alpha_18_ + 0.33990579488191164*alpha_19_ + 0.62003700184452848*alpha_20_ + (-1.5834728788021222)*alpha_21_ =e= 0 ;
stationarity_5_.. w_5_ + (-2.6456675929681532)*alpha_1_ + 0.5225903900791968*alpha_2_ + (-1.8333369401026722)*alpha_3_ + 1.209316130079439*alpha_4_ + (-0.18360175470130713)*alpha_5_ + (-1.9045704463802084)*alpha_6_ + 1.4443157663376163*alpha_7_ + 0.31392281453642779*alpha_8_ + 2.4976775938289935*alpha_9_ + 2.0199081259453435*alpha_10_ + 0.54084558468580768*alpha_11_ + (-1.179508330684333)*alpha_12_ + 0.43643524714322124*alpha_13_ + (-2.3250307746388343)*alpha_14_ + 0.69604272396286848*alpha_15_ + (-1.7670746335034293)*alpha_16_ + (-0.6331940901922267)*alpha_17_ + 1.801634869866125*alpha_18_ + (-0.33990579488191164)*alpha_19_ + (-0.62003700184452848)*alpha_20_ + 1.5834728788021222*alpha_21_ =e= 0 ;
stationarity_6_.. w_6_ + (-2.5001052349579336)*alpha_1_ + (-2.5661357408681349)*alpha_2_ + 0.03959502777664328*alpha_3_ + (-2.0001656106919299)*alpha_4_ - alpha_5_ + (-2.5000000155146407)*alpha_6_ + (-1.7830678704340674)*alpha_7_ + 0.01979751388832164*alpha_8_ + (-1.5000828053459649)*alpha_9_ - alpha_10_ + (-0.7830678704340673)*alpha_11_ + 1.0395950277766433*alpha_12_ + 0.12443332181617278*alpha_13_ - alpha_14_ - alpha_15_ + (-0.87556667818382716)*alpha_16_ - alpha_17_ + (-0.5000828053459649)*alpha_18_ + 0.01979751388832164*alpha_19_ + (-1.1244333218161728)*alpha_20_ + (-1.1244333218161728)*alpha_21_ =e= 0 ;
stationarity_7_.. w_7_ + (-0.49989476504206665)*alpha_1_ + 0.56613574086813467*alpha_2_ + (-0.039595027776643366)*alpha_3_ + 0.00016561069192982947*alpha_4_ + alpha_5_ + 0.50000001551464057*alpha_6_ + 0.7830678704340673*alpha_7_ + (-0.01979751388832164)*alpha_8_ + 0.5000828053459649*alpha_9_ + alpha_10_ + 0.7830678704340673*alpha_11_ + (-0.039595027776643366)*alpha_12_ + 0.87556667818382727*alpha_13_ + alpha_15_ + 1.8755666781838274*alpha_16_ + alpha_17_ + (-0.4999171946540351)*alpha_18_ + (-1.0197975138883217)*alpha_19_ + 0.12443332181617278*alpha_20_ + 0.12443332181617278*alpha_21_ =e= 0 ;
stationarity_8_.. w_8_ + 0.5001052349579333*alpha_1_ + 0.56613574086813467*alpha_2_ + 1.9604049722233565*alpha_3_ + 0.00016561069192982947*alpha_4_ - alpha_5_ + (-0.4999999844853594)*alpha_6_ + 0.7830678704340673*alpha_7_ + 0.98020248611167826*alpha_8_ + 0.5000828053459649*alpha_9_ + (-0.21693212956593266)*alpha_11_ + 0.9604049722233566*alpha_12_ + (-0.12443332181617273)*alpha_13_ + alpha_14_ + (-0.12443332181617273)*alpha_16_ + 0.5000828053459649*alpha_18_ + 0.98020248611167826*alpha_19_ + (-0.87556667818382716)*alpha_20_ + 0.12443332181617284*alpha_21_ =e= 0 ;
stationarity_9_.. w_9_ + 2.4998947650420664*alpha_1_ + 1.4338642591318653*alpha_2_ + (-1.9604049722233565)*alpha_3_ + 1.9998343893080701*alpha_4_ + alpha_5_ + 2.4999999844853593*alpha_6_ + 0.21693212956593266*alpha_7_ + (-0.98020248611167826)*alpha_8_ + 0.4999171946540351*alpha_9_ + 0.21693212956593266*alpha_11_ + (-1.9604049722233565)*alpha_12_ + (-0.87556667818382727)*alpha_13_ + (-0.87556667818382727)*alpha_16_ + 0.4999171946540351*alpha_18_ + 0.019797513888321738*alpha_19_ + 1.8755666781838274*alpha_20_ + 0.87556667818382727*alpha_21_ =e= 0 ;
objective.. GAMS_OBJECTIVE =e= (3*alpha_1_ + 3*alpha_2_ + 3*alpha_3_ + 3*alpha_4_ + 3*alpha_5_ + 3*alpha_6_ + 2*alpha_7_ + alpha_8_ + 2*alpha_9_ + 2*alpha_10_ + alpha_11_ + 2*alpha_12_ + alpha_13_ + alpha_14_ + alpha_15_ + 2*alpha_16_ + alpha_17_ + alpha_18_ + 2*alpha_19_ + 2*alpha_20_ + alpha_21_) - (0.5*(w_0_*w_0_ + w_1_*w_1_ + w_2_*w_2_ + w_3_*w_3_ + w_4_*w_4_ + w_5_*w_5_ + w_6_*w_6_ + w_7_*w_7_ + w_8_*w_8_ + w_9_*w_9_)) ;

alpha_1_.l = 0;
alpha_14_.l = 0;
alpha_2_.l = 0;
alpha_7_.l = 0;
alpha_11_.l = 0;
alpha_3_.l = 0;
alpha_8_.l = 0;
alpha_12_.l = 0;
alpha_19_.l = 0;
alpha_4_.l = 0;
alpha_9_.l = 0;
alpha_15_.l = 0;
alpha_18_.l = 0;
alpha_5_.l = 0;
alpha_10_.l = 0;
alpha_13_.l = 0;
alpha_16_.l = 0;
alpha_20_.l = 0;
alpha_21_.l = 0;
alpha_6_.l = 0;
alpha_17_.l = 0;
w_0_.l = 0;
w_1_.l = 0;
w_2_.l = 0;
w_3_.l = 0;
w_4_.l = 0;
w_5_.l = 0;
w_6_.l = 0;
w_7_.l = 0;
w_8_.l = 0;
w_9_.l = 0;

MODEL GAMS_MODEL /all/ ;
option solprint=off;
option limrow=0;
option limcol=0;
option solvelink=5;
SOLVE GAMS_MODEL USING nlp maximizing GAMS_OBJECTIVE;

Scalars MODELSTAT 'model status', SOLVESTAT 'solve status';
MODELSTAT = GAMS_MODEL.modelstat;
SOLVESTAT = GAMS_MODEL.solvestat;

Scalar OBJEST 'best objective', OBJVAL 'objective value';
OBJEST = GAMS_MODEL.objest;
OBJVAL = GAMS_MODEL.objval;

Scalar NUMVAR 'number of variables';
NUMVAR = GAMS_MODEL.numvar

Scalar NUMEQU 'number of equations';
NUMEQU = GAMS_MODEL.numequ

Scalar NUMDVAR 'number of discrete variables';
NUMDVAR = GAMS_MODEL.numdvar

Scalar NUMNZ 'number of nonzeros';
NUMNZ = GAMS_MODEL.numnz

Scalar ETSOLVE 'time to execute solve statement';
ETSOLVE = GAMS_MODEL.etsolve

